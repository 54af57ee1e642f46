// fake-device-plugin is a Kubernetes device plugin with made-up devices, for the node e2e suite
// (test/e2e/node.e2e.ts): it serves SR-IOV-like and RDMA-like extended resources on a real kubelet
// and records every Allocate, so a test can tell which devices each container got.
// build-parts.sh builds it against k8s.io/kubelet v0.37.2 (pkg/apis/deviceplugin/v1beta1).
//
//	fake-device-plugin --resource intel.com/sriov_netdevice=3 --resource rdma/hca_shared_devices_a=2 \
//	    [--record FILE] [--kubelet-socket PATH] [--plugin-dir DIR] [--device-dir DIR]
//
// Per resource, as real plugins do: one gRPC server on its own socket in the plugin directory
// (fake-<resource with '/' as '_'>.sock), registered with the kubelet's Registration service.
//
// Devices: COUNT ids shaped like PCI addresses, the resource's position in the flags giving the
// bus: the first resource has 0000:3b:02.0, 0000:3b:02.1, ..., the second 0000:3c:02.0, ...
// (eight functions per device number, then 0000:3b:03.0). All are Healthy, always.
//
// Allocate answers each container request with
//   - env PCIDEVICE_<resource, upper case, '.', '/' and '-' as '_'>=<the ids, comma-separated, in
//     the kubelet's order>. This is the SR-IOV network device plugin's variable:
//     k8snetworkplumbingwg/sriov-network-device-plugin pkg/resources/pool_stub.go GetEnvs
//     (commit 40b6f50) builds "PCIDEVICE_<prefix>_<name>" with '.' replaced by '_', upper case,
//     i.e. the same name for "intel.com/sriov_netdevice" (PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE).
//     It has no '-' rule; mapping '-' too keeps the name a valid shell variable. Its
//     PCIDEVICE_..._INFO variable (JSON per device) is not imitated.
//   - one read-only mount per device: a directory it creates, <device-dir>/<id>/ holding
//     device.json ({"resource","id"}), at /fake-devices/<id> in the container. No /dev node:
//     there is no hardware.
//
// and, with --record, appends one JSON line per container request to FILE:
// {"resource":..,"devices":[ids],"env":{..},"time":"<RFC 3339, ns>"}.
//
// GetDevicePluginOptions says PreStartRequired false and GetPreferredAllocationAvailable false
// (so the kubelet never calls GetPreferredAllocation); PreStartContainer is a no-op.
//
// Kubelet restarts: a starting kubelet deletes every socket in its plugin directory and creates
// a new kubelet.sock. The plugin watches the directory (fsnotify, with a 1 s poll as a fallback);
// when its own socket is gone it serves a new one, and whenever its server or kubelet.sock
// (by inode) changed since the last successful registration it registers again, retrying until
// the kubelet answers.
//
// SIGTERM or SIGINT: stops the servers, removes its sockets and the device directories it
// created, exits 0. Bad flags: exit 2 with a message naming the flag and value.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// containerDir is where a device's directory appears in a container.
const containerDir = "/fake-devices"

// maxDevices bounds COUNT: the ids must stay PCI-address-shaped and the node small.
const maxDevices = 64

type resourceFlags []resourceSpec

type resourceSpec struct {
	name  string
	count int
}

func (r *resourceFlags) String() string { return fmt.Sprint(*r) }

func (r *resourceFlags) Set(v string) error {
	name, countText, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want NAME=COUNT, got %q", v)
	}
	// An extended resource name: <domain>/<name>, as the kubelet's Register requires.
	domain, short, ok := strings.Cut(name, "/")
	if !ok || domain == "" || short == "" || strings.Contains(short, "/") {
		return fmt.Errorf("resource name %q: want <domain>/<name>", name)
	}
	count, err := strconv.Atoi(countText)
	if err != nil || count < 1 || count > maxDevices {
		return fmt.Errorf("count %q of %s: want an integer 1..%d", countText, name, maxDevices)
	}
	for _, have := range *r {
		if have.name == name {
			return fmt.Errorf("resource %s given twice", name)
		}
	}
	*r = append(*r, resourceSpec{name, count})
	return nil
}

// EnvName is the variable Allocate sets for resource name (see the header).
func EnvName(resource string) string {
	return "PCIDEVICE_" + strings.ToUpper(strings.NewReplacer(".", "_", "/", "_", "-", "_").Replace(resource))
}

// DeviceIDs are the ids of resource number index (0-based) with count devices.
func DeviceIDs(index, count int) []string {
	ids := make([]string, count)
	for j := range ids {
		ids[j] = fmt.Sprintf("0000:%02x:%02x.%d", 0x3b+index, 2+j/8, j%8)
	}
	return ids
}

// SocketName is the basename of resource's socket in the plugin directory.
func SocketName(resource string) string {
	return "fake-" + strings.ReplaceAll(resource, "/", "_") + ".sock"
}

// recorder appends one JSON line per Allocate container request.
type recorder struct {
	mu   sync.Mutex
	file *os.File
}

type record struct {
	Resource string            `json:"resource"`
	Devices  []string          `json:"devices"`
	Env      map[string]string `json:"env"`
	Time     string            `json:"time"`
}

func (r *recorder) write(rec record) error {
	if r == nil || r.file == nil {
		return nil
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err = r.file.Write(append(line, '\n'))
	return err
}

// plugin serves one resource.
type plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	name      string
	ids       []string
	known     map[string]bool
	socket    string // full path
	deviceDir string
	rec       *recorder

	// Owned by the main loop.
	server          *grpc.Server
	serverIno       uint64
	registered      bool
	registeredIno   uint64 // kubelet.sock's inode at the last successful Register
	lastRegisterErr string
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{PreStartRequired: false, GetPreferredAllocationAvailable: false}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, stream pluginapi.DevicePlugin_ListAndWatchServer) error {
	devs := make([]*pluginapi.Device, len(p.ids))
	for i, id := range p.ids {
		devs[i] = &pluginapi.Device{ID: id, Health: pluginapi.Healthy}
	}
	if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
		return err
	}
	log.Printf("%s: ListAndWatch sent %d devices", p.name, len(devs))
	// The devices never change: hold the stream until the kubelet or our server closes it.
	<-stream.Context().Done()
	return nil
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		for _, id := range c.DevicesIds {
			if !p.known[id] {
				return nil, fmt.Errorf("%s: unknown device %q", p.name, id)
			}
		}
		ids := append([]string(nil), c.DevicesIds...)
		env := map[string]string{EnvName(p.name): strings.Join(ids, ",")}
		mounts := make([]*pluginapi.Mount, len(ids))
		for i, id := range ids {
			mounts[i] = &pluginapi.Mount{
				ContainerPath: containerDir + "/" + id,
				HostPath:      filepath.Join(p.deviceDir, id),
				ReadOnly:      true,
			}
		}
		if err := p.rec.write(record{Resource: p.name, Devices: ids, Env: env, Time: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
			return nil, fmt.Errorf("%s: recording the allocation: %w", p.name, err)
		}
		log.Printf("%s: Allocate %v", p.name, ids)
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{Envs: env, Mounts: mounts})
	}
	return resp, nil
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

func inode(path string) (uint64, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}

// serve (re)starts the gRPC server on a fresh socket.
func (p *plugin) serve() error {
	p.stop()
	if err := os.Remove(p.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lis, err := net.Listen("unix", p.socket)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go func() { _ = srv.Serve(lis) }()
	p.server = srv
	p.serverIno, _ = inode(p.socket)
	p.registered = false
	log.Printf("%s: serving on %s", p.name, p.socket)
	return nil
}

func (p *plugin) stop() {
	if p.server != nil {
		p.server.Stop()
		p.server = nil
	}
}

func register(kubeletSocket string, p *plugin) error {
	conn, err := grpc.NewClient("unix:"+kubeletSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     filepath.Base(p.socket),
		ResourceName: p.name,
		Options:      &pluginapi.DevicePluginOptions{},
	})
	return err
}

// ensure brings p to "serving on its socket and registered with the current kubelet".
func (p *plugin) ensure(kubeletSocket string) {
	if ino, ok := inode(p.socket); p.server == nil || !ok || ino != p.serverIno {
		if p.server != nil {
			log.Printf("%s: socket %s gone (kubelet restart?): serving anew", p.name, p.socket)
		}
		if err := p.serve(); err != nil {
			log.Printf("%s: serving on %s: %v", p.name, p.socket, err)
			return
		}
	}
	kIno, ok := inode(kubeletSocket)
	if !ok {
		p.registered = false
		return
	}
	if p.registered && kIno == p.registeredIno {
		return
	}
	if err := register(kubeletSocket, p); err != nil {
		if msg := err.Error(); msg != p.lastRegisterErr {
			log.Printf("%s: register with %s: %v (retrying)", p.name, kubeletSocket, err)
			p.lastRegisterErr = msg
		}
		return
	}
	p.registered, p.registeredIno, p.lastRegisterErr = true, kIno, ""
	log.Printf("%s: registered with %s", p.name, kubeletSocket)
}

func main() {
	var resources resourceFlags
	flag.Var(&resources, "resource", "NAME=COUNT: serve COUNT devices of extended resource NAME (repeatable)")
	record := flag.String("record", "", "append one JSON line per Allocate container request to this file")
	kubeletSocket := flag.String("kubelet-socket", pluginapi.KubeletSocket, "the kubelet's Registration socket")
	pluginDir := flag.String("plugin-dir", "", "where to put the plugin sockets (default: the kubelet socket's directory)")
	deviceDir := flag.String("device-dir", "", "where to create the per-device directories (default: a new directory under $TMPDIR)")
	flag.Parse()
	log.SetPrefix("fake-device-plugin: ")
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	if len(resources) == 0 {
		fmt.Fprintln(os.Stderr, "fake-device-plugin: --resource NAME=COUNT is required")
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fake-device-plugin: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if *pluginDir == "" {
		*pluginDir = filepath.Dir(*kubeletSocket)
	}
	if err := run(resources, *record, *kubeletSocket, *pluginDir, *deviceDir); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func run(resources resourceFlags, recordPath, kubeletSocket, pluginDir, deviceDir string) error {
	if err := os.MkdirAll(pluginDir, 0o755); err != nil {
		return err
	}
	madeDeviceDir := false
	if deviceDir == "" {
		d, err := os.MkdirTemp("", "fake-devices-")
		if err != nil {
			return err
		}
		deviceDir, madeDeviceDir = d, true
	}
	var rec *recorder
	if recordPath != "" {
		f, err := os.OpenFile(recordPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		rec = &recorder{file: f}
	}

	var plugins []*plugin
	var made []string // device directories to remove at exit
	defer func() {
		for _, p := range plugins {
			p.stop()
			_ = os.Remove(p.socket)
		}
		for _, d := range made {
			_ = os.RemoveAll(d)
		}
		if madeDeviceDir {
			_ = os.RemoveAll(deviceDir)
		}
	}()
	for i, r := range resources {
		p := &plugin{name: r.name, ids: DeviceIDs(i, r.count), known: map[string]bool{},
			socket: filepath.Join(pluginDir, SocketName(r.name)), deviceDir: deviceDir, rec: rec}
		plugins = append(plugins, p)
		for _, id := range p.ids {
			p.known[id] = true
			dir := filepath.Join(deviceDir, id)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			made = append(made, dir)
			info, _ := json.Marshal(map[string]string{"resource": r.name, "id": id})
			if err := os.WriteFile(filepath.Join(dir, "device.json"), append(info, '\n'), 0o644); err != nil {
				return err
			}
		}
		log.Printf("%s: %d devices %v, env %s", r.name, len(p.ids), p.ids, EnvName(r.name))
	}

	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer watcher.Close()
	if err := watcher.Add(pluginDir); err != nil {
		return err
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		for _, p := range plugins {
			p.ensure(kubeletSocket)
		}
		select {
		case s := <-sigs:
			log.Printf("%v: removing sockets and exiting", s)
			return nil
		case <-watcher.Events:
			// Let a burst of events (a kubelet clearing the directory) settle.
			time.Sleep(50 * time.Millisecond)
		drain:
			for {
				select {
				case <-watcher.Events:
				default:
					break drain
				}
			}
		case err := <-watcher.Errors:
			log.Printf("watching %s: %v", pluginDir, err)
		case <-tick.C:
			// The directory itself may have been recreated: watch it again.
			_ = watcher.Add(pluginDir)
		}
	}
}
