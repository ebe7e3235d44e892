// Package complex has one function of each complexity the test expects.
package complex

// Branchy counts 10: 1, an if with && and || (3), for, range, two cases
// (not default), one select case (not default), and an if in a function
// literal.
func Branchy(a, b bool, xs []int, c chan int) int {
	n := 0
	if a && b || !a {
		n++
	}
	for i := 0; i < 3; i++ {
		n++
	}
	for range xs {
		n++
	}
	switch n {
	case 1:
		n++
	case 2:
		n--
	default:
	}
	select {
	case v := <-c:
		n += v
	default:
	}
	f := func() {
		if n > 4 {
			n = 4
		}
	}
	f()
	return n
}

// T has a method.
type T struct{}

// Plain counts 1.
func (*T) Plain() {}
