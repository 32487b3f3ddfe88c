package netlab

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Namespaces puts nodes in their own Linux network namespaces, joined by veth
// pairs to one bridge in the root namespace, with optional tc netem delay
// and loss: several hosts on one machine. Root only.
type Namespaces struct {
	prefix string
	bridge string
	nss    []string
}

const labNet = "10.77" // 10.77.0.0/16, on the bridge only

// NewNamespaces creates the bridge, or says clearly why it cannot.
func NewNamespaces() (*Namespaces, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("--netns needs root (network namespaces, veth, tc)")
	}
	l := &Namespaces{prefix: fmt.Sprintf("pg%d", os.Getpid()%100000)}
	l.bridge = l.prefix + "br"
	for _, args := range [][]string{
		{"link", "add", l.bridge, "type", "bridge"},
		{"addr", "add", labNet + ".0.1/16", "dev", l.bridge},
		{"link", "set", l.bridge, "up"},
	} {
		if err := ip(args...); err != nil {
			l.Close()
			return nil, fmt.Errorf("--netns: cannot make the bridge: %w", err)
		}
	}
	return l, nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Host adds namespace i with address 10.77.x.y and returns the namespace
// and address.
func (l *Namespaces) Host(i int, delay time.Duration, loss float64) (string, string, error) {
	ns := fmt.Sprintf("%s-%d", l.prefix, i)
	outer, inner := fmt.Sprintf("%sh%d", l.prefix, i), fmt.Sprintf("%sn%d", l.prefix, i)
	addr := fmt.Sprintf("%s.%d.%d", labNet, 1+i/250, 1+i%250)
	cmds := [][]string{
		{"netns", "add", ns},
		{"link", "add", outer, "type", "veth", "peer", "name", inner},
		{"link", "set", inner, "netns", ns},
		{"link", "set", outer, "master", l.bridge},
		{"link", "set", outer, "up"},
		{"-n", ns, "addr", "add", addr + "/16", "dev", inner},
		{"-n", ns, "link", "set", inner, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
	}
	for j, c := range cmds {
		if err := ip(c...); err != nil {
			return "", "", err
		}
		if j == 0 {
			l.nss = append(l.nss, ns)
		}
	}
	if delay > 0 || loss > 0 {
		args := []string{"netns", "exec", ns, "tc", "qdisc", "add", "dev", inner, "root", "netem"}
		if delay > 0 {
			args = append(args, "delay", fmt.Sprintf("%dms", delay.Milliseconds()))
		}
		if loss > 0 {
			args = append(args, "loss", fmt.Sprintf("%g%%", loss))
		}
		if err := ip(args...); err != nil {
			return "", "", fmt.Errorf("--netem-*: tc netem is unavailable here (the kernel lacks sch_netem?): %w", err)
		}
	}
	return ns, addr, nil
}

// Cut takes host i's link down (or back up): a partition.
func (l *Namespaces) Cut(i int, down bool) error {
	state := "up"
	if down {
		state = "down"
	}
	return ip("link", "set", fmt.Sprintf("%sh%d", l.prefix, i), state)
}

// Close removes every namespace (their veths go with them) and the bridge.
func (l *Namespaces) Close() {
	for _, ns := range l.nss {
		ip("netns", "del", ns)
	}
	ip("link", "del", l.bridge)
}
