package store

import (
	"runtime"
	"syscall"
)

// runLowered starts fn on a thread of its own that has the lowest
// priority, nice 19 (on Linux a thread's nice value is its own), with the
// thread's ID. The thread ends when fn returns. It reports false, and
// does not run fn, if the system refused to lower a thread.
func runLowered(fn func(tid int)) bool {
	started := make(chan bool, 1)
	go func() {
		runtime.LockOSThread()
		tid := syscall.Gettid()
		if tid == syscall.Getpid() {
			// The main thread, which does not end with its goroutine:
			// leave it as it is and take another, which the runtime
			// must give while this goroutine holds this one.
			started <- runLowered(fn)
			runtime.UnlockOSThread()
			return
		}
		if syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19) != nil {
			started <- false
			return
		}
		started <- true
		fn(tid)
	}()
	return <-started
}
