//go:build race

package e2e

// raceDetector tells whether the tests run with -race: the binary is then
// built with it too.
const raceDetector = true
