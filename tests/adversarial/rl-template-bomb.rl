apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
functionConfig:
  apiVersion: trainc.dev/v1alpha1
  kind: TrainSpec
  metadata: {name: x}
  spec:
    image: 'a:1'
    script: t.py
    args: ["{{ range(100000) | join('x' * 100000) | length }}"]
