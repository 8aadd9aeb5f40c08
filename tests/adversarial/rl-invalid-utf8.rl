apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
x: ÿþ
