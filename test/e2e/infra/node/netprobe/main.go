// netprobe is the test container of the node e2e suite, built static by build-parts.sh into
// netattach.local/netprobe:e2e (entrypoint /netprobe). It prints what the kubelet gave the
// container, so `kubectl logs` shows it, then waits:
//
//	env: K=V                one line per environment variable, sorted
//	file: PATH              for each regular file under each --cat PATH (repeatable) and each
//	<content>               entry of NETPROBE_CAT (comma-separated), sorted by path, followed by
//	                        its content (a newline added when it lacks one)
//	missing: PATH: ERROR    a --cat path that cannot be read
//	netprobe: ready         after all of it
//
// Symlinks to files are followed (a Downward API volume's entries are symlinks into ..data);
// names starting with ".." (the kubelet's atomic-writer directories) are skipped, so each file
// prints once. Then it sleeps until SIGTERM or SIGINT and exits 0; with --once it exits 0 at once.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var cat list
	flag.Var(&cat, "cat", "print every file under this path (repeatable)")
	once := flag.Bool("once", false, "exit after printing instead of waiting for SIGTERM")
	flag.Parse()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	env := os.Environ()
	sort.Strings(env)
	var out strings.Builder
	for _, kv := range env {
		fmt.Fprintf(&out, "env: %s\n", kv)
	}
	if v := os.Getenv("NETPROBE_CAT"); v != "" {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				cat = append(cat, p)
			}
		}
	}
	for _, root := range cat {
		printTree(&out, root)
	}
	out.WriteString("netprobe: ready\n")
	os.Stdout.WriteString(out.String())
	if *once {
		return
	}
	s := <-sigs
	fmt.Fprintf(os.Stderr, "netprobe: %v, exiting\n", s)
}

func printTree(out *strings.Builder, root string) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && strings.HasPrefix(d.Name(), "..") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		} else if d.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(out, "missing: %s: %v\n", root, err)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(out, "missing: %s: %v\n", f, err)
			continue
		}
		fmt.Fprintf(out, "file: %s\n%s", f, b)
		if len(b) == 0 || b[len(b)-1] != '\n' {
			out.WriteString("\n")
		}
	}
}
