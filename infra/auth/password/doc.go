// Package password hashes and verifies users' passwords with argon2id
// (RFC 9106, golang.org/x/crypto/argon2), stored as PHC strings:
//
//	$argon2id$v=19$m=65536,t=3,p=4$<salt, base64>$<key, base64>
//
// The string records its own parameters, so Verify works across changes of
// configuration, and NeedsRehash tells the login path when to store a new
// hash made with the current Params. Keys are compared in constant time;
// VerifyMissing spends the same time when the account does not exist.
//
//	stored, err := password.New(pw, password.DefaultParams())
//	ok, err := password.Verify(pw, stored)
//	if ok && password.NeedsRehash(stored, cfg) { stored, err = password.New(pw, cfg) }
package password
