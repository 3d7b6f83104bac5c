package bustest

import (
	"os"
	"path/filepath"
)

// createTemp picks a new file name in dir starting with name.
func createTemp(dir, name string) (string, error) {
	f, err := os.CreateTemp(dir, name+"-*.creds")
	if err != nil {
		return "", err
	}
	path := f.Name()
	f.Close()
	return filepath.Clean(path), os.Remove(path)
}
