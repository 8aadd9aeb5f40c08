apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
---
apiVersion: config.kubernetes.io/v1
kind: ResourceList
