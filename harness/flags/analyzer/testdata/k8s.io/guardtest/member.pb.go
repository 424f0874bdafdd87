// A generated protobuf message's stand-in: the analyzer knows one by its *.pb.go file.
package guardtest

type Member struct {
	Name string `protobuf:"bytes,1,opt,name=name,proto3" json:"name,omitempty"`
}
