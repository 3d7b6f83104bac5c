package nvml

import "errors"

// defaultLibrary is the NVML library go-nvml loads unless told otherwise:
// the one the NVIDIA driver installs.
const defaultLibrary = "libnvidia-ml.so.1"

// ErrLibraryNotFound: the NVML library (libnvidia-ml.so.1, or the path a
// spec names) could not be loaded: this node has no NVIDIA driver, or not
// where it is looked for. Errors carrying it are also domain.ErrUnavailable
// and name the library.
var ErrLibraryNotFound = errors.New("NVML library not found")
