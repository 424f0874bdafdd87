// Command webhook is hardwire's admission and conversion webhook: a Pod behind a Service that the
// apiserver calls over TLS. Three paths, one per role (learn capstone runs one Deployment per role):
//   - /validate denies a ConfigMap with a data key "forbidden", and any other object that /mutate
//     has not labelled (so it proves that mutation ran before validation);
//   - /mutate labels the object with mutatedLabel;
//   - /convert converts a Thermo between v1 (spec.celsius) and v2 (spec.temperature{value,unit}).
//
// Each request is logged to stdout (kubectl logs). Standard library only: the image is this one
// static binary on the empty base.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"net/http"
	"os"
	"strings"
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
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	} `json:"object"`
}

type response struct {
	UID       string  `json:"uid"`
	Allowed   bool    `json:"allowed"`
	Status    *status `json:"status,omitempty"`
	PatchType string  `json:"patchType,omitempty"`
	Patch     []byte  `json:"patch,omitempty"`
}

type status struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const (
	denied       = "hardwire stage-2 webhook: key forbidden is not allowed"
	notMutated   = "hardwire webhook: not labelled " + mutatedLabel + " (the mutating webhook did not run on it)"
	mutatedLabel = "webhook.hardwire.dev/mutated"
)

// admit decodes an AdmissionReview, answers it with decide's response and logs the outcome.
func admit(w http.ResponseWriter, r *http.Request, decide func(q *request) *response) {
	var in review
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
		log.Printf("bad request from %s: not an AdmissionReview (%v)", r.RemoteAddr, err)
		http.Error(w, "expected an AdmissionReview", http.StatusBadRequest)
		return
	}
	q := in.Request
	out := decide(q)
	out.UID = q.UID
	log.Printf("review uid=%s %s %s %s/%s allowed=%t%s", q.UID, q.Operation, q.Kind.Kind, q.Namespace, q.Name, out.Allowed, map[bool]string{true: " patched"}[out.Patch != nil])
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(review{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Response: out})
}

func validate(w http.ResponseWriter, r *http.Request) {
	admit(w, r, func(q *request) *response {
		if q.Kind.Kind == "ConfigMap" {
			if _, bad := q.Object.Data["forbidden"]; bad {
				return &response{Status: &status{Code: http.StatusForbidden, Message: denied}}
			}
			return &response{Allowed: true}
		}
		if _, ok := q.Object.Metadata.Labels[mutatedLabel]; !ok {
			return &response{Status: &status{Code: http.StatusForbidden, Message: notMutated}}
		}
		return &response{Allowed: true}
	})
}

func mutate(w http.ResponseWriter, r *http.Request) {
	admit(w, r, func(q *request) *response {
		// A JSON patch cannot add to a map that is not there: add the whole map then.
		op := map[string]any{"op": "add", "path": "/metadata/labels/" + strings.ReplaceAll(mutatedLabel, "/", "~1"), "value": "true"}
		if q.Object.Metadata.Labels == nil {
			op = map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{mutatedLabel: "true"}}
		}
		patch, _ := json.Marshal([]any{op})
		return &response{Allowed: true, PatchType: "JSONPatch", Patch: patch}
	})
}

// The parts of apiextensions.k8s.io/v1 ConversionReview this server reads and writes.
type conversionReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Request    *struct {
		UID               string           `json:"uid"`
		DesiredAPIVersion string           `json:"desiredAPIVersion"`
		Objects           []map[string]any `json:"objects"`
	} `json:"request,omitempty"`
	Response *conversionResponse `json:"response,omitempty"`
}

type conversionResponse struct {
	UID              string           `json:"uid"`
	ConvertedObjects []map[string]any `json:"convertedObjects"`
	Result           struct {
		Status  string `json:"status"`
		Message string `json:"message,omitempty"`
	} `json:"result"`
}

// thermo converts one Thermo's spec to the desired version: v1 {celsius}, v2 {temperature: {value, unit}}.
func thermo(o map[string]any, desired string) error {
	from, _ := o["apiVersion"].(string)
	spec, _ := o["spec"].(map[string]any)
	o["apiVersion"] = desired
	if spec == nil || from == desired {
		return nil
	}
	switch {
	case strings.HasSuffix(desired, "/v1"):
		t, _ := spec["temperature"].(map[string]any)
		v, _ := t["value"].(float64)
		if t["unit"] == "F" {
			v = (v - 32) * 5 / 9
		}
		o["spec"] = map[string]any{"celsius": math.Round(v*100) / 100}
	case strings.HasSuffix(desired, "/v2"):
		c, _ := spec["celsius"].(float64)
		o["spec"] = map[string]any{"temperature": map[string]any{"value": c, "unit": "C"}}
	default:
		return fmt.Errorf("cannot convert to %s", desired)
	}
	return nil
}

func convert(w http.ResponseWriter, r *http.Request) {
	var in conversionReview
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
		log.Printf("bad request from %s: not a ConversionReview (%v)", r.RemoteAddr, err)
		http.Error(w, "expected a ConversionReview", http.StatusBadRequest)
		return
	}
	q := in.Request
	out := &conversionResponse{UID: q.UID, ConvertedObjects: []map[string]any{}}
	out.Result.Status = "Success"
	for _, o := range q.Objects {
		meta, _ := o["metadata"].(map[string]any)
		from := o["apiVersion"]
		if err := thermo(o, q.DesiredAPIVersion); err != nil {
			out.Result.Status, out.Result.Message = "Failure", err.Error()
			break
		}
		log.Printf("convert uid=%s %s/%v %v to %s", q.UID, meta["namespace"], meta["name"], from, q.DesiredAPIVersion)
		out.ConvertedObjects = append(out.ConvertedObjects, o)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(conversionReview{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview", Response: out})
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
	http.HandleFunc("/mutate", mutate)
	http.HandleFunc("/convert", convert)
	log.Printf("hardwire-webhook %s listening on https://%s (/validate, /mutate, /convert)", version, *addr)
	log.Fatal(http.ListenAndServeTLS(*addr, *cert, *key, nil))
}
