apiVersion: v1
kind: List
items: []
