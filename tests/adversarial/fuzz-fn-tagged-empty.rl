apiVersion: coniufkgeb.rnetes.io/v2
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:`{na;;;;;;;;;em: c}
  data: {a: !!binary(aGk=, b: 0644, c* 'x', d:
 t }
