module k8s.io/guardtest

go 1.26.0
