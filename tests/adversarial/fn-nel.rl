apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c}
  data: {nel: "a\Nb", ls: "c\Ld"}
functionConfig:
  apiVersion: trainc.dev/v1alpha1
  kind: TrainSpec
  metadata:
    name: demo
    annotations: {config.kubernetes.io/local-config: 'true'}
  spec: {image: 'ghcr.io/acme/train:1.4', script: /app/train.py}
