// Package e2e holds Cairn's end-to-end tests: they build the real cairn
// binary, start `cairn dev` (and `cairn agent`) as processes on free ports
// with their data in temporary directories, and drive them through the
// HTTP API against the real Podman service, embedded NATS and SQLite.
//
// Podman is what scripts/install-podman.sh provides (infra/podmantest):
// without it the tests fail when CI=true and are skipped loudly otherwise.
// Every test uses an agent id of its own and removes the containers
// labelled with it when it ends, so tests never touch other containers on
// a shared machine.
//
// The binary is built with the race detector when the tests run with it
// (`make test`), so a data race in the processes fails the test (they exit
// with status 66); CAIRN_E2E_RACE=0 or 1 overrides that.
package e2e
