package osm

// Fingerprint is the budget's fingerprint of password, for the tests that check that it never
// leaves the budget.
func (b *LoginBudget) Fingerprint(password string) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	fingerprint := b.fingerprint(password)
	return fingerprint[:]
}
