// The JSON contract between the flag dumpers and the analyzer, in a module of its own with no
// dependencies, so that both the analyzer's module and the etcd module can use it without one
// taking the other's build list.
module hardwire.local/flags/analyzer/runtimeflags

go 1.26.0
