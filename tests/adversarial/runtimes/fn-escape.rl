apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
functionConfig:
  apiVersion: trainc.dev/v1alpha1
  kind: TrainSpec
  metadata: {name: demo}
  spec:
    image: 'ghcr.io/acme/train:1.4'
    script: /app/train.py
    target: trainjob
    trainjob: {runtimesFile: '../../../../../../../../../../etc/passwd'}
