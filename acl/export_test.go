package acl

// PinnedRuns returns how many of m's executions took the pinned path
// (pin.go), so that tests can tell it from the checked one.
func PinnedRuns(m *Model) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pinned.runs
}
