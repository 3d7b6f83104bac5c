// Package archtest keeps the folders to the layer rule of
// docs/architecture.md: its test lists every package of the module with
// `go list` and fails naming each import that breaks the rule. It holds
// no production code; Check is the rule itself, so that a test can feed
// it a made-up import graph and see every kind of break reported.
package archtest
