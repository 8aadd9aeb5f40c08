apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: kubeflow.org/v2
  kind: PyTorchJob
  metadata:
    labels:
      app.kubernetes.io/managed-by: trainc
      app.kubernetes.io/name: resnet-elastic
    name: resnet-elastic
  spec:
    elasticPolicy:
      minReplicas: 2
      maxReplicas: 8
      rdzvBackend: c10d
      rdzvConf:
      - key: join_timeout
        value: '1200'
      - key: last_call_timeout
        value: '60'
      maxRestarts: 10
    nprocPerNode: '1'
    pytorchReplicaSpecs:
      Worker:
        replicas: 7
        restartPolicy: OnFailure
        template:
          metadata:
            annotations:
              sidecar.istio.io/inject: 'false'
            labels:
              app.kubernetes.io/managed-by: trainc
              app.kubernetes.io/name: resnet-elastic
          spec:
            containers:
            - args:
              - --epochs
              - '90'
              - --checkpoint-dir
              - /ckpt
              command:
              - torchrun
              - --nproc_per_node=1
              - /app/train.py
              env:
              - name: OMP_NUM_THREADS
                value: '4'
              image: ghcr.io/acme/resnet:2.1.0
              name: pytorch
              ports:
              - containerPort: 23456
                name: pytorchjob-port
              resources:
                limits:
                  cpu: '8'
                  memory: 64Gi
                requests:
                  cpu: '8'
                  memory: 64Gi
              volumeMounts:
              - mountPath: /ckpt
                name: ckpt
              - mountPath: /dev/shm
                name: trainc-shm
            volumes:
            - name: ckpt
              persistentVolumeClaim:
                claimName: resnet-checkpoints
            - emptyDir:
                medium: Memory
                sizeLimit: 15Gi
              name: trainc-shm
- apiVersion: kubeflow.org/v1
  kind: PyTorchJob
  metadata:
    labels:
      app.kubernetes.io/managed-by: trainc
      app.kubernetes.io/name: resnet-elastic
    name: resnet-elastic
  spec:
    elasticPolicy:
      minReplicas: 2
      maxReplicas: 8
      rdzvBackend: c10d
      rdzvConf:
      - key: join_timeout
        value: '1200'
      - key: last_call_timeout
        value: '60'
      maxRestarts: 10
    nprocPerNode: '1'
    pytorchReplicaSpecs:
      Worker:
        replicas: 8
        restartPolicy: OnFailure
        template:
          metadata:
            annotations:
              sidecar.istio.io/inject: 'false'
    : '24'
    scheduling:
      queue: team-vision
      workloadPriorityClass: research
      priorityClassName: research-high
      schedulerName: volcano
      gang: true
      volcanoQueue: gpu-research
      serviceAccountName: trainer
      imagePullSecrets:
      - ghcr-pull
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
    policy:
      suspend: true
      activeDeadline: 48h
      cleanPodPolicy: Running
    labels:
      team: vision
      acme.com/cost-center: research-42
    annotations:
      acme.com/owner: vision-team@acme.com
