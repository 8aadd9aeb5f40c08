apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
    annotations:
      config.kubernetes.io/origin: "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
functionConfig:
  apiVersion: trainc.dev/v1alpha1
  kind: TrainSpec
  metadata:
    name: demo
    annotations: {config.kubernetes.io/local-config: 'true'}
  spec: {image: 'ghcr.io/acme/train:1.4', script: /app/train.py}
