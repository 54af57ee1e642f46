// A no-op admission webhook pair for `npm run bench:apiserver` (test infrastructure, not product
// code): POST /mutate answers allowed with a fixed JSONPatch (netattach's patch for the bench pod),
// POST /validate answers allowed. Standard library only.
//
//	noop-webhook -listen 127.0.0.1:0 -cert tls.crt -key tls.key -patch patch.json [-http1]
//
// Prints "listening <addr>" on stdout once bound. GET /stats (same port) returns the number of
// TLS connections accepted and requests served, with the protocol of each, as JSON.
package main

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
)

type review struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Request    *struct {
		UID string `json:"uid"`
	} `json:"request"`
}

type response struct {
	UID       string `json:"uid"`
	Allowed   bool   `json:"allowed"`
	PatchType string `json:"patchType,omitempty"`
	Patch     string `json:"patch,omitempty"`
}

type answer struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Response   response `json:"response"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	certFile := flag.String("cert", "", "serving certificate (PEM)")
	keyFile := flag.String("key", "", "serving key (PEM)")
	patchFile := flag.String("patch", "", "JSONPatch (JSON array) returned by /mutate; empty: no patch")
	http1 := flag.Bool("http1", false, "serve HTTP/1.1 only (no h2 in ALPN)")
	flag.Parse()

	var patch string
	if *patchFile != "" {
		raw, err := os.ReadFile(*patchFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var check []map[string]any
		if err := json.Unmarshal(raw, &check); err != nil {
			fmt.Fprintln(os.Stderr, "patch is not a JSON array of operations:", err)
			os.Exit(1)
		}
		patch = base64.StdEncoding.EncodeToString(raw)
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	var conns, requests, h2requests atomic.Int64
	handle := func(withPatch bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			if r.ProtoMajor == 2 {
				h2requests.Add(1)
			}
			var in review
			if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&in); err != nil || in.Request == nil {
				http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
				return
			}
			out := answer{APIVersion: in.APIVersion, Kind: in.Kind, Response: response{UID: in.Request.UID, Allowed: true}}
			if withPatch && patch != "" {
				out.Response.PatchType = "JSONPatch"
				out.Response.Patch = patch
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mutate", handle(true))
	mux.HandleFunc("POST /validate", handle(false))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]int64{"connections": conns.Load(), "requests": requests.Load(), "h2Requests": h2requests.Load()})
	})

	srv := &http.Server{
		Handler:   mux,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	if *http1 {
		// An empty (non-nil) map turns off Go's automatic HTTP/2.
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	if err := srv.ServeTLS(ln, "", ""); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
