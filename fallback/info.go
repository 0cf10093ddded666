package fallback

// GetSocName is aclrtGetSocName: the configured SoC name, or "" before
// Init (the C function returns NULL then).
func (n *NPU) GetSocName() string {
	if !n.enter() {
		return ""
	}
	defer n.exit()
	if n.state.Load() != stateInit {
		return ""
	}
	return n.cfg.soc
}

// GetVersion is aclrtGetVersion: the configured runtime version.
func (n *NPU) GetVersion() (major, minor, patch int32, err error) {
	if _, err := n.begin("aclrtGetVersion", false); err != nil {
		return 0, 0, 0, err
	}
	defer n.exit()
	v := n.cfg.version
	return v[0], v[1], v[2], nil
}
