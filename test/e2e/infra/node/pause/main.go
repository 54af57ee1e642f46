// pause is the sandbox ("pause") image's only binary for the node e2e suite, built static by
// build-parts.sh into netattach.local/pause:e2e: it holds the pod's namespaces, reaps the
// children it inherits as PID 1, says "pause: waiting" on stderr once its signal handlers are
// in place, and exits 0 on SIGTERM or SIGINT, as Kubernetes' pause does.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (netattach e2e)")
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	fmt.Fprintln(os.Stderr, "pause: waiting") // the signal handlers are in place from here
	for s := range sigs {
		if s != syscall.SIGCHLD {
			fmt.Fprintf(os.Stderr, "pause: %v, exiting\n", s)
			os.Exit(0)
		}
		for { // reap every child that has exited
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
