// Command webhook is the stage-2 validating admission webhook: a Pod behind a Service that the
// apiserver calls over TLS. It denies a ConfigMap with a data key "forbidden" and allows the rest,
// logging each AdmissionReview to stdout (kubectl logs). Standard library only: the image is this
// one static binary on the empty base.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
)

// Stamped by the build (-X main.version) with the catalog's version, which -version prints.
var version = "devel"

// The parts of admission.k8s.io/v1 AdmissionReview this server reads and writes.
type review struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Request    *request  `json:"request,omitempty"`
	Response   *response `json:"response,omitempty"`
}

type request struct {
	UID       string                `json:"uid"`
	Kind      struct{ Kind string } `json:"kind"`
	Namespace string                `json:"namespace"`
	Name      string                `json:"name"`
	Operation string                `json:"operation"`
	Object    struct {
		Data map[string]string `json:"data"`
	} `json:"object"`
}

type response struct {
	UID     string  `json:"uid"`
	Allowed bool    `json:"allowed"`
	Status  *status `json:"status,omitempty"`
}

type status struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const denied = "hardwire stage-2 webhook: key forbidden is not allowed"

func validate(w http.ResponseWriter, r *http.Request) {
	var in review
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
		log.Printf("bad request from %s: not an AdmissionReview (%v)", r.RemoteAddr, err)
		http.Error(w, "expected an AdmissionReview", http.StatusBadRequest)
		return
	}
	q := in.Request
	out := &response{UID: q.UID, Allowed: true}
	if _, bad := q.Object.Data["forbidden"]; bad && q.Kind.Kind == "ConfigMap" {
		out = &response{UID: q.UID, Allowed: false, Status: &status{Code: http.StatusForbidden, Message: denied}}
	}
	log.Printf("review uid=%s %s %s %s/%s allowed=%t", q.UID, q.Operation, q.Kind.Kind, q.Namespace, q.Name, out.Allowed)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(review{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Response: out})
}

func main() {
	addr := flag.String("listen", ":8443", "HTTPS address")
	cert := flag.String("cert", "/tls/tls.crt", "serving certificate (PEM), from the Secret")
	key := flag.String("key", "/tls/tls.key", "its private key (PEM)")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("hardwire-webhook", version)
		return
	}
	log.SetOutput(os.Stdout)
	http.HandleFunc("/validate", validate)
	log.Printf("hardwire-webhook %s listening on https://%s/validate", version, *addr)
	log.Fatal(http.ListenAndServeTLS(*addr, *cert, *key, nil))
}
