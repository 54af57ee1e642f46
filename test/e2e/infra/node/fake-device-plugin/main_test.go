// The plugin against a fake kubelet: a Registration server on a temp socket that, like the
// kubelet's device manager, dials each registered endpoint, asks for the options, and reads the
// first ListAndWatch answer. The plugin runs as a separate process (this test binary re-executed
// as main), so SIGTERM and the socket cleanup are the real ones. build-parts.sh --test runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

func TestMain(m *testing.M) {
	if os.Getenv("FAKE_DP_BE_MAIN") == "1" {
		os.Args = append([]string{"fake-device-plugin"}, strings.Split(os.Getenv("FAKE_DP_ARGS"), "\x1f")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// registration is what the fake kubelet learnt from one Register call.
type registration struct {
	req     *pluginapi.RegisterRequest
	opts    *pluginapi.DevicePluginOptions
	devices []*pluginapi.Device
	err     error
}

type fakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	dir  string
	srv  *grpc.Server
	regs chan registration
}

func startKubelet(t *testing.T, dir string) *fakeKubelet {
	t.Helper()
	// A starting kubelet clears its device-plugin directory (device manager Start), then listens.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	lis, err := net.Listen("unix", filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKubelet{dir: dir, srv: grpc.NewServer(), regs: make(chan registration, 16)}
	pluginapi.RegisterRegistrationServer(k.srv, k)
	go func() { _ = k.srv.Serve(lis) }()
	return k
}

func (k *fakeKubelet) stop() {
	k.srv.Stop()
	_ = os.Remove(filepath.Join(k.dir, "kubelet.sock"))
}

func (k *fakeKubelet) Register(_ context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	if req.Version != pluginapi.Version {
		return nil, fmt.Errorf("version %q", req.Version)
	}
	go func() {
		r := registration{req: req}
		defer func() { k.regs <- r }()
		conn, err := grpc.NewClient("unix:"+filepath.Join(k.dir, req.Endpoint), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			r.err = err
			return
		}
		defer conn.Close()
		c := pluginapi.NewDevicePluginClient(conn)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if r.opts, r.err = c.GetDevicePluginOptions(ctx, &pluginapi.Empty{}); r.err != nil {
			return
		}
		stream, err := c.ListAndWatch(ctx, &pluginapi.Empty{})
		if err != nil {
			r.err = err
			return
		}
		resp, err := stream.Recv()
		if err != nil {
			r.err = err
			return
		}
		r.devices = resp.Devices
	}()
	return &pluginapi.Empty{}, nil
}

// waitRegistrations collects n registrations, keyed by resource name.
func (k *fakeKubelet) waitRegistrations(t *testing.T, n int) map[string]registration {
	t.Helper()
	got := map[string]registration{}
	deadline := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case r := <-k.regs:
			if r.err != nil {
				t.Fatalf("after Register(%s): %v", r.req.ResourceName, r.err)
			}
			got[r.req.ResourceName] = r
		case <-deadline:
			t.Fatalf("only %d of %d resources registered: %v", len(got), n, got)
		}
	}
	return got
}

func dial(t *testing.T, socket string) pluginapi.DevicePluginClient {
	t.Helper()
	conn, err := grpc.NewClient("unix:"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pluginapi.NewDevicePluginClient(conn)
}

func ids(devs []*pluginapi.Device) []string {
	var out []string
	for _, d := range devs {
		if d.Health != pluginapi.Healthy {
			panic("unhealthy device " + d.ID)
		}
		out = append(out, d.ID)
	}
	sort.Strings(out)
	return out
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"intel.com/sriov_netdevice": "PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE",
		"rdma/hca_shared_devices_a": "PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A",
		"example.com/sriov-net-a.b": "PCIDEVICE_EXAMPLE_COM_SRIOV_NET_A_B",
	} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := DeviceIDs(1, 10); got[0] != "0000:3c:02.0" || got[7] != "0000:3c:02.7" || got[8] != "0000:3c:03.0" {
		t.Errorf("DeviceIDs(1, 10) = %v", got)
	}
	var r resourceFlags
	for _, bad := range []string{"nocount", "noslash=1", "a.com/x=0", "a.com/x=65", "a.com/x=two", "/x=1", "a.com/=1"} {
		if err := r.Set(bad); err == nil {
			t.Errorf("--resource %s accepted", bad)
		}
	}
	if err := r.Set("a.com/x=2"); err != nil {
		t.Fatal(err)
	}
	if err := r.Set("a.com/x=3"); err == nil {
		t.Error("a resource given twice was accepted")
	}
}

func TestAgainstFakeKubelet(t *testing.T) {
	dir, err := os.MkdirTemp("", "dp") // short: a unix socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pluginDir := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	deviceDir := filepath.Join(dir, "devices")
	recordPath := filepath.Join(dir, "allocations.jsonl")
	kubeletSock := filepath.Join(pluginDir, "kubelet.sock")

	kubelet := startKubelet(t, pluginDir)
	defer func() { kubelet.stop() }()

	args := []string{"--resource", "intel.com/sriov_netdevice=3", "--resource", "rdma/hca_shared_devices_a=2",
		"--record", recordPath, "--kubelet-socket", kubeletSock, "--device-dir", deviceDir}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAKE_DP_BE_MAIN=1", "FAKE_DP_ARGS="+strings.Join(args, "\x1f"))
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("plugin log:\n%s", logs.String())
		}
	}()

	sriov, rdma := "intel.com/sriov_netdevice", "rdma/hca_shared_devices_a"
	wantIDs := map[string][]string{
		sriov: {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:02.2"},
		rdma:  {"0000:3c:02.0", "0000:3c:02.1"},
	}
	check := func(regs map[string]registration) {
		t.Helper()
		for name, want := range wantIDs {
			r, ok := regs[name]
			if !ok {
				t.Fatalf("%s did not register: %v", name, regs)
			}
			if r.req.Endpoint != SocketName(name) {
				t.Errorf("%s endpoint %q, want %q", name, r.req.Endpoint, SocketName(name))
			}
			if r.opts.PreStartRequired || r.opts.GetPreferredAllocationAvailable {
				t.Errorf("%s options %v", name, r.opts)
			}
			if got := ids(r.devices); !reflect.DeepEqual(got, want) {
				t.Errorf("%s ListAndWatch devices %v, want %v", name, got, want)
			}
		}
	}
	check(kubelet.waitRegistrations(t, 2))

	// Allocate: one container with two SR-IOV devices, one with one, in one request.
	c := dial(t, filepath.Join(pluginDir, SocketName(sriov)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"0000:3b:02.2", "0000:3b:02.0"}}, {DevicesIds: []string{"0000:3b:02.1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ContainerResponses) != 2 {
		t.Fatalf("%d container responses", len(resp.ContainerResponses))
	}
	first := resp.ContainerResponses[0]
	if want := map[string]string{"PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE": "0000:3b:02.2,0000:3b:02.0"}; !reflect.DeepEqual(first.Envs, want) {
		t.Errorf("env %v, want %v", first.Envs, want)
	}
	if len(first.Mounts) != 2 || first.Mounts[0].ContainerPath != "/fake-devices/0000:3b:02.2" || !first.Mounts[0].ReadOnly {
		t.Errorf("mounts %v", first.Mounts)
	}
	info, err := os.ReadFile(filepath.Join(first.Mounts[1].HostPath, "device.json"))
	if err != nil || !strings.Contains(string(info), `"id":"0000:3b:02.0"`) || !strings.Contains(string(info), sriov) {
		t.Errorf("device.json of 0000:3b:02.0: %q %v", info, err)
	}
	if _, err := c.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"0000:3c:02.0"}}, // an RDMA id on the SR-IOV server
	}}); err == nil || !strings.Contains(err.Error(), "unknown device") {
		t.Errorf("an unknown device id: %v", err)
	}
	if _, err := c.PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{DevicesIds: []string{"0000:3b:02.0"}}); err != nil {
		t.Errorf("PreStartContainer: %v", err)
	}
	r := dial(t, filepath.Join(pluginDir, SocketName(rdma)))
	if resp, err := r.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"0000:3c:02.1"}},
	}}); err != nil || resp.ContainerResponses[0].Envs["PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A"] != "0000:3c:02.1" {
		t.Errorf("RDMA Allocate: %v %v", resp, err)
	}

	// The record: one line per container request, in order; the refused one is not there.
	f, err := os.Open(recordPath)
	if err != nil {
		t.Fatal(err)
	}
	var recs []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("record line %q: %v", sc.Text(), err)
		}
		if _, err := time.Parse(time.RFC3339Nano, rec.Time); err != nil {
			t.Errorf("record time %q: %v", rec.Time, err)
		}
		recs = append(recs, rec)
	}
	f.Close()
	if len(recs) != 3 {
		t.Fatalf("%d record lines, want 3: %v", len(recs), recs)
	}
	if !reflect.DeepEqual(recs[0].Devices, []string{"0000:3b:02.2", "0000:3b:02.0"}) || recs[0].Resource != sriov ||
		recs[0].Env["PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE"] != "0000:3b:02.2,0000:3b:02.0" ||
		!reflect.DeepEqual(recs[1].Devices, []string{"0000:3b:02.1"}) ||
		recs[2].Resource != rdma || !reflect.DeepEqual(recs[2].Devices, []string{"0000:3c:02.1"}) {
		t.Errorf("records %+v", recs)
	}

	// A kubelet restart: the old one goes, the new one clears the directory (our sockets too)
	// and listens anew. Both resources register again, with new sockets that serve.
	kubelet.stop()
	kubelet = startKubelet(t, pluginDir)
	restarted := time.Now()
	check(kubelet.waitRegistrations(t, 2))
	t.Logf("re-registered %v after the fake kubelet restarted", time.Since(restarted).Round(time.Millisecond))
	c = dial(t, filepath.Join(pluginDir, SocketName(sriov)))
	if resp, err := c.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"0000:3b:02.1"}},
	}}); err != nil || resp.ContainerResponses[0].Envs["PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE"] != "0000:3b:02.1" {
		t.Errorf("Allocate after the restart: %v %v", resp, err)
	}

	// SIGTERM: exit 0, sockets and device directories gone, the record file kept.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10 s after SIGTERM")
	}
	for _, name := range []string{sriov, rdma} {
		if _, err := os.Lstat(filepath.Join(pluginDir, SocketName(name))); !os.IsNotExist(err) {
			t.Errorf("socket of %s still there after SIGTERM: %v", name, err)
		}
	}
	if left, _ := os.ReadDir(deviceDir); len(left) != 0 {
		t.Errorf("device directories left after SIGTERM: %v", left)
	}
	if _, err := os.Stat(recordPath); err != nil {
		t.Errorf("record file: %v", err)
	}
}
