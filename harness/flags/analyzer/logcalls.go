// Which calls print a message (msgonly.go): the log calls that print and return, and the types
// of the loggers they are made on.

package main

import (
	"go/types"
	"strings"
)

// isMessageLog: f prints its arguments for people and returns (no Fatal, Exit, Panic, DPanic).
func isMessageLog(f *types.Func) bool {
	if f.Pkg() == nil {
		return false
	}
	recv := recvName(f)
	prefixed := func(ps ...string) bool {
		for _, p := range ps {
			if strings.HasPrefix(f.Name(), p) {
				return true
			}
		}
		return false
	}
	switch f.Pkg().Path() {
	case "k8s.io/klog/v2":
		return (recv == "" || recv == "Verbose") && prefixed("Info", "Warning", "Error")
	case "github.com/go-logr/logr":
		return recv == "Logger" && (f.Name() == "Info" || f.Name() == "Error")
	case "go.uber.org/zap":
		return (recv == "Logger" || recv == "SugaredLogger") && prefixed("Debug", "Info", "Warn", "Error")
	case "log":
		return (recv == "" || recv == "Logger") && prefixed("Print")
	}
	return false
}

// recvName: the name of f's receiver's type ("" for a function).
func recvName(f *types.Func) string {
	sig, _ := f.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return ""
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// isLoggerType: a value whose methods print (a call that returns one only fetches the logger).
func isLoggerType(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	switch n.Obj().Pkg().Path() + "." + n.Obj().Name() {
	case "go.uber.org/zap.Logger", "go.uber.org/zap.SugaredLogger", "github.com/go-logr/logr.Logger", "k8s.io/klog/v2.Verbose":
		return true
	}
	return false
}
