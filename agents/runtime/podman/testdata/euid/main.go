// Command euid prints its effective uid: the isolation tests make it
// setuid and check whether the bit took effect.
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println(os.Geteuid()) }
