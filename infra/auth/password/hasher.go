package password

// Hasher hashes new passwords under Params: the commands' PasswordHasher
// (commands.Options.PasswordHasher).
type Hasher struct {
	Params Params
}

// Hash returns the PHC string of password under h.Params.
func (h Hasher) Hash(password string) (string, error) { return New(password, h.Params) }
