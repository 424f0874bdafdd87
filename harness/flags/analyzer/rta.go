// Reachability with rapid type analysis: an interface method call reaches the implementations of
// the types the reached code converts to an interface, not every implementation in the load (class
// hierarchy analysis), nor every type it constructs (issue 25: that cited etcd's TLSInfo.String for
// kube-apiserver). CHA made kube-scheduler reach (*clientcmd.PathOptions).IsExplicitFile and
// (*SecureServingOptions).DefaultExternalAddress through kube-apiserver's code in the same load;
// the linker drops both from kube-scheduler, so the lines cited there are never run (issue 25).

package main

import (
	"go/types"
)

// madeType is the named type of a value of type t (through one pointer): the type whose methods an
// interface holding that value dispatches to. Interfaces and unnamed types have none.
func madeType(t types.Type) *types.TypeName {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	if !ok || types.IsInterface(n) {
		return nil
	}
	return n.Origin().Obj()
}

// reachable returns the functions reachable from root through static references and interface
// dispatch to the types reached code converts to an interface. A type converted counts with the
// types of its value fields (embedded or not): their methods are promoted into its method set.
// The initialization of every package the command imports (closure) runs too, with what it
// reaches: init() registers function values (localSchemeBuilder.Register(RegisterConversions))
// that reached code calls later, and var initializers make types (DefaultComponentGlobalsRegistry,
// a scheme's types). Function values
// count as calls, which over-approximates; that is fine, because the Kubernetes flag set comes
// from the command itself and this only chooses among candidates.
func (ix *index) reachable(root *types.Func, closure map[string]bool) map[*funcNode]bool {
	seen := map[*funcNode]bool{}
	visited := map[*types.Func]bool{}
	live := map[*types.TypeName]bool{}
	waiting := map[*types.TypeName][]*types.Func{} // implementations whose type is not made yet
	queue := []*types.Func{root}
	var makeLive func(tn *types.TypeName)
	makeLive = func(tn *types.TypeName) {
		if live[tn] {
			return
		}
		live[tn] = true
		queue = append(queue, waiting[tn]...)
		delete(waiting, tn)
		if st, ok := tn.Type().Underlying().(*types.Struct); ok {
			for i := 0; i < st.NumFields(); i++ {
				if _, isPtr := types.Unalias(st.Field(i).Type()).(*types.Pointer); isPtr {
					continue
				}
				if f := madeType(st.Field(i).Type()); f != nil {
					makeLive(f)
				}
			}
		}
	}
	for p := range closure {
		if in := ix.inits[p]; in != nil {
			for _, tn := range in.makes {
				makeLive(tn)
			}
			queue = append(queue, in.refs...)
		}
	}
	for len(queue) > 0 {
		f := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if visited[f] {
			continue
		}
		visited[f] = true
		if sig, ok := f.Type().(*types.Signature); ok && sig.Recv() != nil {
			if _, isIface := sig.Recv().Type().Underlying().(*types.Interface); isIface {
				for _, c := range ix.implementations(f) {
					if tn := madeType(c.Type().(*types.Signature).Recv().Type()); tn == nil || live[tn] {
						queue = append(queue, c)
					} else {
						waiting[tn] = append(waiting[tn], c)
					}
				}
				continue
			}
		}
		n := ix.funcs[f]
		if n == nil {
			continue
		}
		seen[n] = true
		queue = append(queue, n.refs...)
		for _, tn := range n.makes {
			makeLive(tn)
		}
	}
	return seen
}
