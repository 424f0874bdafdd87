module k8s.io/msgtest

go 1.26.0

require (
	github.com/go-logr/logr v1.4.3
	go.uber.org/multierr v1.11.0
	go.uber.org/zap v1.27.1
	k8s.io/klog/v2 v2.140.0
)
