module k8s.io/rtatest

go 1.26.0
