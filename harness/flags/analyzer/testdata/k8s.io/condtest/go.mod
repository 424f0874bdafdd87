module k8s.io/condtest

go 1.26.0
