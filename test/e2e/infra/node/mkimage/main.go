// mkimage writes a single-binary container image as a docker-archive tarball (manifest.json,
// config, one layer) that `ctr -n k8s.io images import` loads, with go-containerregistry's
// tarball package. No registry and no docker daemon are involved. build-parts.sh runs it.
//
//	mkimage --name netattach.local/pause:e2e --binary ./pause --entrypoint /pause --out pause.tar
//
// The layer holds the binary alone (mode 0755, owner root) at the entrypoint path; times are
// zero so the same binary gives the same image digest.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	ref := flag.String("name", "", "image reference, e.g. netattach.local/pause:e2e")
	binary := flag.String("binary", "", "the static binary to put in the image")
	entry := flag.String("entrypoint", "", "its absolute path in the image, also the entrypoint")
	out := flag.String("out", "", "the tarball to write")
	flag.Parse()
	if err := run(*ref, *binary, *entry, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(ref, binary, entry, out string) error {
	if ref == "" || binary == "" || out == "" || !strings.HasPrefix(entry, "/") {
		return fmt.Errorf("need --name, --binary, --out and an absolute --entrypoint (got %q)", entry)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("--name %q: %w", ref, err)
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(entry, "/"),
		Mode: 0o755, Size: int64(len(bin)), Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := tw.Write(bin); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	data := layerTar.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config = v1.Config{Entrypoint: []string{entry}, Env: []string{"PATH=/"}, WorkingDir: "/"}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, tag, img)
}
