apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: "\e[31mred\u202e"
    namespace: "\e]0;title\a"
    annotations: {config.kubernetes.io/path: "\e[2Jp.yaml"}
  data: {a: 1}
functionConfig:
  apiVersion: trainc.dev/v1alpha1
  kind: TrainSpec
  metadata:
    name: "\e[31mdemo"
    annotations: {config.kubernetes.io/local-config: 'true'}
  spec: {image: 'ghcr.io/acme/train:1.4', script: /app/train.py}
