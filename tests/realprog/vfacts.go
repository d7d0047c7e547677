// SPDX-License-Identifier: MIT
// vfacts.go - what vtimers.go and vguest.go print, built into each (go
// build PROGRAM.go vfacts.go): facts, never times.  A wait's fact holds
// when it ended no earlier than its deadline and, with TFD_EXACT set
// (virtual time), less than a millisecond after it (the runtime's own
// short sleeps move the clock too: its usleep(3) as it steals work, its
// monitor's 20 us).  Lengths are divided by SCALE, the first argument.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var exact = os.Getenv("TFD_EXACT") != ""
var ok = true
var scale int64 = 1

// setScale takes SCALE from the arguments, if given.
func setScale() {
	if len(os.Args) > 1 {
		scale, _ = strconv.ParseInt(os.Args[1], 10, 64)
		if scale < 1 {
			scale = 1
		}
	}
}

func ms(n int64) time.Duration {
	return time.Duration(n * 1000000 / scale)
}

func fact(what string, good bool) {
	ok = ok && good
	if good {
		fmt.Println("ok   " + what)
	} else {
		fmt.Println("FAIL " + what)
	}
}

func report(what string, got, want time.Duration) {
	good := got >= want && (!exact || got-want < time.Millisecond)
	if !good {
		what += fmt.Sprintf(" (%v, want %v)", got, want)
	}
	fact(what, good)
}

// finish prints "all ok", or ends with status 1.
func finish() {
	if !ok {
		os.Exit(1)
	}
	fmt.Println("all ok")
}
