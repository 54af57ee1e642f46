// A webhook client shaped like kube-apiserver's (Go net/http, keep-alive, HTTP/2 when the server
// offers it): sequential POSTs of one AdmissionReview, for `npm run bench:apiserver`'s
// investigations (docs/performance.md). Standard library only; test infrastructure.
//
//	webhook-probe -url https://127.0.0.1:8443/mutate -ca ca.crt -body review.json [-n 2000] [-http1] [-pause 2ms]
//
// Prints p50/p90/p99 of the round trip in microseconds, and how many connections were dialled.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "", "webhook URL")
	caFile := flag.String("ca", "", "CA of the webhook's serving certificate")
	bodyFile := flag.String("body", "", "AdmissionReview to send")
	n := flag.Int("n", 2000, "requests (after 200 warm-up)")
	http1 := flag.Bool("http1", false, "HTTP/1.1 only")
	pause := flag.Duration("pause", 2*time.Millisecond, "pause between requests (the apiserver's other work)")
	flag.Parse()
	ca, err := os.ReadFile(*caFile)
	check(err)
	body, err := os.ReadFile(*bodyFile)
	check(err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	var dials atomic.Int64
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, ServerName: "localhost"},
		ForceAttemptHTTP2:   !*http1,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return dialer.DialContext(ctx, network, addr)
		},
	}
	if *http1 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	proto := ""
	one := func() time.Duration {
		t := time.Now()
		resp, err := client.Post(*url, "application/json", bytes.NewReader(body))
		check(err)
		_, err = io.Copy(io.Discard, resp.Body)
		check(err)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			check(fmt.Errorf("status %d", resp.StatusCode))
		}
		proto = resp.Proto
		return time.Since(t)
	}
	for i := 0; i < 200; i++ {
		one()
		time.Sleep(*pause)
	}
	d := make([]time.Duration, *n)
	for i := range d {
		d[i] = one()
		time.Sleep(*pause)
	}
	sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
	q := func(p float64) int64 { return d[int(p*float64(len(d)-1))].Microseconds() }
	fmt.Printf("{\"proto\":%q,\"p50us\":%d,\"p90us\":%d,\"p99us\":%d,\"dials\":%d}\n", proto, q(0.5), q(0.9), q(0.99), dials.Load())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
