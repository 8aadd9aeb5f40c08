apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
a: &a [x,x,x,x,x,x,x,x,x,x]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]
functionConfig:
  apiVersion: trainc.dev/v1alpha1
  kind: TrainSpec
  metadata:
    name: demo
    annotations: {config.kubernetes.io/local-config: 'true'}
  spec: {image: 'ghcr.io/acme/train:1.4', script: /app/train.py}
