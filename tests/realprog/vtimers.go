// SPDX-License-Identifier: MIT
// vtimers.go - a Go program's timers on virtual time (issue 21): the
// runtime reads its clocks through the vDSO and waits with system calls
// of its own, which tfd takes over (libtfd-preload, gosys.c).  Built
// with cgo, as a program must be for a preload to load at all.
// time.Sleep, a Ticker, time.After in a select, context.WithTimeout,
// AfterFunc and Reset, a read deadline on a TCP connection, a child
// process.  Prints facts (vfacts.go).
//
//   vtimers [SCALE]   (times divided by SCALE, the hour by 100 SCALE)
//   vtimers now       (the Unix time, in seconds)
package main

// #include <stdlib.h>
import "C"

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"time"
)

func main() {
	C.free(nil) // cgo: the program is linked with the C library
	if len(os.Args) > 1 && os.Args[1] == "now" {
		fmt.Println(time.Now().Unix())
		return
	}
	setScale()

	t0 := time.Now()
	time.Sleep(ms(2000))
	report("time.Sleep(2 s)", time.Since(t0), ms(2000))

	t0 = time.Now()
	tk := time.NewTicker(ms(1000))
	ticks := 0
	end := time.After(ms(5500))
loop:
	for {
		select {
		case <-tk.C:
			ticks++
		case <-end:
			break loop
		}
	}
	tk.Stop()
	fact("a Ticker of 1 s for 5.5 s: 5 ticks", ticks == 5)
	report("time.After(5.5 s) in a select", time.Since(t0), ms(5500))

	t0 = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), ms(3000))
	<-ctx.Done()
	cancel()
	report("context.WithTimeout(3 s): Done", time.Since(t0), ms(3000))
	fact("context.WithTimeout(3 s): DeadlineExceeded",
		ctx.Err() == context.DeadlineExceeded)

	t0 = time.Now()
	fired := make(chan time.Duration, 1)
	tm := time.AfterFunc(ms(1000), func() { fired <- time.Since(t0) })
	time.Sleep(ms(500))
	fact("AfterFunc(1 s) Reset at 0.5 s to 2 s: was active", tm.Reset(ms(2000)))
	report("AfterFunc(1 s) Reset at 0.5 s to 2 s: runs at 2.5 s", <-fired, ms(2500))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("FAIL listen:", err)
		os.Exit(1)
	}
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println("FAIL dial:", err)
		os.Exit(1)
	}
	peer, _ := ln.Accept()
	t0 = time.Now()
	conn.SetReadDeadline(t0.Add(ms(4000)))
	_, err = conn.Read(make([]byte, 1))
	ne, isnet := err.(net.Error)
	fact("a TCP read with a 4 s deadline and no data: a timeout",
		isnet && ne.Timeout())
	report("a TCP read with a 4 s deadline", time.Since(t0), ms(4000))
	peer.Close()
	conn.Close()
	ln.Close()

	t0 = time.Now()
	secs := fmt.Sprintf("%g", float64(ms(2000))/1e9)
	err = exec.Command("sleep", secs).Run()
	fact("a child's sleep 2: ends well", err == nil)
	fact("a child's sleep 2: never early", time.Since(t0) >= ms(2000))

	// Natively (SCALE given) a hundredth more.
	hour := ms(3600 * 1000)
	if scale > 1 {
		hour /= 100
	}
	done := make(chan time.Duration)
	t0 = time.Now()
	go func() { time.Sleep(hour); done <- time.Since(t0) }()
	report("time.Sleep(1 h) in a goroutine", <-done, hour)

	finish()
}
