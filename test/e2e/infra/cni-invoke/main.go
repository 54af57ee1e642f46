// cni-invoke calls one CNI delegate the way Multus v4.3.0 does for one entry of a pod's
// k8s.v1.cni.cncf.io/networks annotation, with libcni at the version Multus pins (cni v1.3.0).
// It is the runtime oracle's invoker (test/e2e/cni-oracle.e2e.ts); build-cni.sh builds it.
//
// One JSON request on stdin, one JSON answer on stdout:
//
//	{"op":"ADD"|"DEL", "binDir", "cacheDir", "netns", "containerID", "podNamespace", "podName",
//	 "podUID", "index": <position in Multus's delegate list; 0 is the cluster network>,
//	 "nadName", "config": <NAD spec.config>, "selection": <the annotation element>}
//	→ {"ok": true, "ifName", "result": <CNI result>} or {"ok": false, "ifName", "error"}
//
// Exit code 0 when the operation succeeded, 1 when Multus or the delegate failed, 2 on a bad
// request. The steps, each after Multus v4.3.0:
//   - the annotation element is validated as pkg/k8sclient/k8sclient.go parsePodNetworkAnnotation
//     does (net.ParseMAC for mac and infiniband-guid, ParseCIDR/ParseIP for each ips entry);
//   - the NAD config gets its name when it has none (network-attachment-definition-client
//     pkg/utils/cniconfig.go GetCNIConfigFromSpec);
//   - a config without "type" is a conflist (pkg/types/conf.go LoadDelegateNetConf); cni-args are
//     merged into args.cni of the config, or of every plugin of a conflist (injectCNIArgs,
//     addCNIArgsInConfig, addCNIArgsInConfList);
//   - the interface is the selection's "interface", else "net<index>" (pkg/multus/multus.go
//     getIfname); ADD fails when that name already exists in the pod's netns (validateIfName);
//   - CNI_ARGS are IgnoreUnknown=true, K8S_POD_NAMESPACE, K8S_POD_NAME,
//     K8S_POD_INFRA_CONTAINER_ID, K8S_POD_UID (pkg/types/conf.go createRuntimeConf), then on ADD
//     only MAC=<mac> and IP=<ips joined by ","> (pkg/multus/multus.go DelegateAdd);
//   - capability args ips, mac, infinibandGUID, deviceID from the selection
//     (pkg/types/conf.go mergeCNIRuntimeConfig, newCNIRuntimeConf); libcni passes each only to a
//     plugin whose config declares that capability;
//   - libcni AddNetwork / AddNetworkList (conflists chain prevResult), DelNetwork /
//     DelNetworkList (pkg/multus/multus.go confAdd, conflistAdd, confDel, conflistDel);
//   - default-route (the selection's GatewayRequest), after a successful ADD whose result has
//     interfaces or IPs (DelegateAdd): the interface's routes without a Dst are deleted
//     (pkg/netutils DeleteDefaultGW), then a route via each gateway is added on it, EEXIST
//     ignored, and only the last gateway's error kept (SetDefaultGW): "error setting default
//     gateway: ...". The libcni cache updates that follow are left out.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

type selection struct {
	Name           string                  `json:"name"`
	Namespace      string                  `json:"namespace,omitempty"`
	IPs            []string                `json:"ips,omitempty"`
	MAC            string                  `json:"mac,omitempty"`
	InfinibandGUID string                  `json:"infiniband-guid,omitempty"`
	Interface      string                  `json:"interface,omitempty"`
	DeviceID       string                  `json:"deviceID,omitempty"`
	DefaultRoute   []string                `json:"default-route,omitempty"`
	CNIArgs        *map[string]interface{} `json:"cni-args"`
}

type request struct {
	Op           string    `json:"op"`
	BinDir       string    `json:"binDir"`
	CacheDir     string    `json:"cacheDir"`
	NetNS        string    `json:"netns"`
	ContainerID  string    `json:"containerID"`
	PodNamespace string    `json:"podNamespace"`
	PodName      string    `json:"podName"`
	PodUID       string    `json:"podUID"`
	Index        int       `json:"index"`
	NADName      string    `json:"nadName"`
	Config       string    `json:"config"`
	Selection    selection `json:"selection"`
}

type answer struct {
	OK     bool        `json:"ok"`
	IfName string      `json:"ifName,omitempty"`
	Result interface{} `json:"result,omitempty"`
	Error  string      `json:"error,omitempty"`
}

func main() {
	var req request
	raw, err := io.ReadAll(os.Stdin)
	if err == nil {
		err = json.Unmarshal(raw, &req)
	}
	if err == nil && req.Op != "ADD" && req.Op != "DEL" {
		err = fmt.Errorf("op: Unsupported value: %q: supported values: \"ADD\", \"DEL\"", req.Op)
	}
	if err != nil {
		reply(2, answer{Error: "bad request: " + err.Error()})
	}
	ifName := ifNameOf(req)
	result, err := run(req, ifName)
	if err != nil {
		reply(1, answer{IfName: ifName, Error: err.Error()})
	}
	reply(0, answer{OK: true, IfName: ifName, Result: result})
}

func reply(code int, a answer) {
	_ = json.NewEncoder(os.Stdout).Encode(a)
	os.Exit(code)
}

// ifNameOf is Multus's getIfname for a delegate that is not the cluster network.
func ifNameOf(req request) string {
	if req.Selection.Interface != "" {
		return req.Selection.Interface
	}
	return fmt.Sprintf("net%d", req.Index)
}

func run(req request, ifName string) (interface{}, error) {
	sel := req.Selection
	if err := validateSelection(sel); err != nil {
		return nil, err
	}
	config, err := withName([]byte(req.Config), req.NADName)
	if err != nil {
		return nil, err
	}
	var probe map[string]interface{}
	if err := json.Unmarshal(config, &probe); err != nil {
		return nil, fmt.Errorf("LoadDelegateNetConf: error unmarshalling delegate config: %v", err)
	}
	isList := probe["type"] == nil || probe["type"] == ""
	if sel.CNIArgs != nil {
		if config, err = addCNIArgs(config, *sel.CNIArgs, isList); err != nil {
			return nil, err
		}
	}

	rt := &libcni.RuntimeConf{
		ContainerID: req.ContainerID,
		NetNS:       req.NetNS,
		IfName:      ifName,
		Args: [][2]string{
			{"IgnoreUnknown", "true"},
			{"K8S_POD_NAMESPACE", req.PodNamespace},
			{"K8S_POD_NAME", req.PodName},
			{"K8S_POD_INFRA_CONTAINER_ID", req.ContainerID},
			{"K8S_POD_UID", req.PodUID},
		},
		CapabilityArgs: capabilityArgs(sel),
	}
	cni := libcni.NewCNIConfigWithCacheDir([]string{req.BinDir}, req.CacheDir, nil)
	ctx := context.Background()

	if req.Op == "DEL" {
		if isList {
			list, err := libcni.NetworkConfFromBytes(config)
			if err != nil {
				return nil, fmt.Errorf("conflistDel: error converting the raw bytes into a conflist: %v", err)
			}
			return nil, cni.DelNetworkList(ctx, list, rt)
		}
		conf, err := libcni.ConfFromBytes(config)
		if err != nil {
			return nil, fmt.Errorf("error in converting the raw bytes to conf: %v", err)
		}
		return nil, cni.DelNetwork(ctx, conf, rt)
	}

	if err := validateIfName(req.NetNS, ifName); err != nil {
		// delegate.Conf.Type: empty for a conflist.
		confType, _ := probe["type"].(string)
		return nil, fmt.Errorf("DelegateAdd: cannot set %q interface name to %q: %v", confType, ifName, err)
	}
	if sel.MAC != "" {
		rt.Args = append(rt.Args, [2]string{"MAC", sel.MAC})
	}
	if sel.IPs != nil {
		rt.Args = append(rt.Args, [2]string{"IP", strings.Join(sel.IPs, ",")})
	}
	var result types.Result
	if isList {
		list, err := libcni.NetworkConfFromBytes(config)
		if err != nil {
			return nil, fmt.Errorf("conflistAdd: error converting the raw bytes into a conflist: %v", err)
		}
		result, err = cni.AddNetworkList(ctx, list, rt)
		if err != nil {
			return nil, err
		}
	} else {
		conf, err := libcni.ConfFromBytes(config)
		if err != nil {
			return nil, fmt.Errorf("error in converting the raw bytes to conf: %v", err)
		}
		result, err = cni.AddNetwork(ctx, conf, rt)
		if err != nil {
			return nil, err
		}
	}
	if len(sel.DefaultRoute) > 0 {
		if err := defaultRoute(req.NetNS, ifName, result, sel.DefaultRoute); err != nil {
			return nil, err
		}
	}
	return result, nil
}

// defaultRoute is DelegateAdd's GatewayRequest branch with DeleteDefaultGW and SetDefaultGW.
func defaultRoute(nsPath, ifName string, result types.Result, gateways []string) error {
	res, err := current.NewResultFromResult(result)
	// Multus logs "failed to read result ..., but proceed" and then skips the gateways.
	if err != nil || res == nil || (res.Interfaces == nil && res.IPs == nil) {
		return nil
	}
	handle, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("error deleting default gateway: %v", err)
	}
	defer handle.Close()
	nl, err := netlink.NewHandleAt(handle)
	if err != nil {
		return fmt.Errorf("error deleting default gateway: %v", err)
	}
	defer nl.Close()
	// DeleteDefaultGW: the link's routes whose Dst is nil; the last RouteDel's error is returned.
	link, _ := nl.LinkByName(ifName)
	routes, _ := nl.RouteList(link, netlink.FAMILY_ALL)
	for _, r := range routes {
		if r.Dst == nil {
			err = nl.RouteDel(&r)
		}
	}
	if err != nil {
		return fmt.Errorf("error deleting default gateway: %v", err)
	}
	// SetDefaultGW: every gateway is tried, and only the last one's error survives.
	link, err = nl.LinkByName(ifName)
	if err != nil {
		return fmt.Errorf("error setting default gateway: SetDefaultGW: Error getting link %v", err)
	}
	for _, gw := range gateways {
		err = nl.RouteAdd(&netlink.Route{LinkIndex: link.Attrs().Index, Gw: net.ParseIP(gw)})
		if err != nil && os.IsExist(err) { // EEXIST, as Multus's os.IsExist || unix.EEXIST
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("error setting default gateway: %v", err)
	}
	return nil
}

// validateSelection is the part of parsePodNetworkAnnotation and DelegateAdd that checks values.
func validateSelection(sel selection) error {
	if sel.MAC != "" {
		if _, err := net.ParseMAC(sel.MAC); err != nil {
			return fmt.Errorf("parsePodNetworkAnnotation: failed to mac: %v", err)
		}
	}
	if sel.InfinibandGUID != "" {
		if _, err := net.ParseMAC(sel.InfinibandGUID); err != nil {
			return fmt.Errorf("parsePodNetworkAnnotation: failed to validate infiniband GUID: %v", err)
		}
	}
	for _, gw := range sel.DefaultRoute {
		if net.ParseIP(gw) == nil {
			return fmt.Errorf("parsePodNetworkAnnotation: failed to parse default-route %q", gw)
		}
	}
	for _, ip := range sel.IPs {
		if strings.Contains(ip, "/") {
			if _, _, err := net.ParseCIDR(ip); err != nil {
				return fmt.Errorf("failed to parse CIDR %q: %v", ip, err)
			}
		} else if net.ParseIP(ip) == nil {
			return fmt.Errorf("failed to parse IP address %q", ip)
		}
	}
	return nil
}

// withName is GetCNIConfigFromSpec: a config without a name takes the NAD's.
func withName(config []byte, nadName string) ([]byte, error) {
	var raw map[string]interface{}
	if err := json.Unmarshal(config, &raw); err != nil {
		return nil, fmt.Errorf("failed to unmarshal Spec.Config: %v", err)
	}
	if n, ok := raw["name"]; !ok || n == "" {
		raw["name"] = nadName
		return json.Marshal(raw)
	}
	return config, nil
}

// addCNIArgs is addCNIArgsInConfig / addCNIArgsInConfList with injectCNIArgs: the selection's
// keys overwrite those of an existing args.cni.
func addCNIArgs(config []byte, cniArgs map[string]interface{}, isList bool) ([]byte, error) {
	var raw map[string]interface{}
	if err := json.Unmarshal(config, &raw); err != nil {
		return nil, fmt.Errorf("addCNIArgsInConfig(): failed to unmarshal inBytes: %v", err)
	}
	if !isList {
		if err := injectCNIArgs(raw, cniArgs); err != nil {
			return nil, err
		}
		return json.Marshal(raw)
	}
	plugins, ok := raw["plugins"].([]interface{})
	if !ok {
		return nil, errors.New("addCNIArgsInConfList(): unable to get plugin list")
	}
	for _, p := range plugins {
		plugin, ok := p.(map[string]interface{})
		if !ok {
			return nil, errors.New("addCNIArgsInConfList(): a plugin is not an object")
		}
		if err := injectCNIArgs(plugin, cniArgs); err != nil {
			return nil, err
		}
	}
	return json.Marshal(raw)
}

func injectCNIArgs(conf map[string]interface{}, cniArgs map[string]interface{}) error {
	args, ok := conf["args"]
	if !ok {
		conf["args"] = map[string]interface{}{"cni": cniArgs}
		return nil
	}
	// Multus type-asserts without checking (a panic in the thick daemon); an error here.
	argsMap, ok := args.(map[string]interface{})
	if !ok {
		return errors.New("injectCNIArgs: args is not an object")
	}
	existing, ok := argsMap["cni"]
	if !ok {
		argsMap["cni"] = cniArgs
		return nil
	}
	cniMap, ok := existing.(map[string]interface{})
	if !ok {
		return errors.New("injectCNIArgs: args.cni is not an object")
	}
	for k, v := range cniArgs {
		cniMap[k] = v
	}
	return nil
}

// capabilityArgs is mergeCNIRuntimeConfig + newCNIRuntimeConf for one NAD delegate (portMappings
// and bandwidth are not part of the oracle's corpus).
func capabilityArgs(sel selection) map[string]interface{} {
	caps := map[string]interface{}{}
	if len(sel.IPs) != 0 {
		caps["ips"] = sel.IPs
	}
	if sel.MAC != "" {
		caps["mac"] = sel.MAC
	}
	if sel.InfinibandGUID != "" {
		caps["infinibandGUID"] = sel.InfinibandGUID
	}
	if sel.DeviceID != "" {
		caps["deviceID"] = sel.DeviceID
	}
	return caps
}

// validateIfName fails when the pod's netns already holds a link of that name.
func validateIfName(nsPath, ifName string) error {
	handle, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("validateIfName: no net namespace %s found: %v", nsPath, err)
	}
	defer handle.Close()
	nl, err := netlink.NewHandleAt(handle)
	if err != nil {
		return fmt.Errorf("validateIfName: %v", err)
	}
	defer nl.Close()
	if _, err := nl.LinkByName(ifName); err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return nil
		}
		return err
	}
	return fmt.Errorf("validateIfName: interface name %s already exists", ifName)
}
