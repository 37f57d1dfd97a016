package calibrate

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// nnls returns the x >= 0 that minimises ||a x - b|| (non-negative least
// squares), by Lawson and Hanson's active-set algorithm (Solving Least
// Squares Problems, 1974, chapter 23): start with every variable held at
// zero; repeatedly free the one whose gradient most wants it to grow,
// solve the unconstrained problem over the free variables, and when that
// makes some free variable negative, step back toward the previous x
// until the first one reaches zero and hold it there again. The
// unconstrained solves are gonum's QR least squares.
//
// It returns the free set too: x[j] > 0 exactly for free[j].
func nnls(a *mat.Dense, b *mat.VecDense) (x *mat.VecDense, free []bool, err error) {
	return nnlsSteps(a, b, nil)
}

// nnlsSteps is nnls, calling stepBack (when not nil) with the step's
// length alpha and x after each step back toward the previous x.
func nnlsSteps(a *mat.Dense, b *mat.VecDense, stepBack func(alpha float64, x *mat.VecDense)) (x *mat.VecDense, free []bool, err error) {
	m, n := a.Dims()
	x = mat.NewVecDense(n, nil)
	free = make([]bool, n)
	tol := 10 * 2.220446049250313e-16 * mat.Norm(a, 1) * float64(max(m, n))
	w := mat.NewVecDense(n, nil)
	r := mat.NewVecDense(m, nil)
	gradient := func() {
		r.MulVec(a, x)
		r.SubVec(b, r)
		w.MulVec(a.T(), r)
	}
	gradient()
	// tried holds the variables freed without effect since x last
	// changed: a rounding error can make the solve give a variable that
	// the gradient wanted to grow a value <= 0; it is not tried again
	// until x moves.
	tried := make([]bool, n)
	for outer := 0; ; outer++ {
		if outer > 3*n+3 {
			return nil, nil, errors.New("non-negative least squares did not converge")
		}
		j, best := -1, tol
		for i := 0; i < n; i++ {
			if !free[i] && !tried[i] && w.AtVec(i) > best {
				j, best = i, w.AtVec(i)
			}
		}
		if j < 0 {
			return x, free, nil
		}
		free[j] = true
		for inner := 0; ; inner++ {
			if inner > 3*n+3 {
				return nil, nil, errors.New("non-negative least squares did not converge")
			}
			z, err := solveFree(a, b, free)
			if err != nil {
				return nil, nil, err
			}
			if inner == 0 && z.AtVec(j) <= 0 {
				free[j], tried[j] = false, true
				break
			}
			alpha, allPositive := 1.0, true
			for i := 0; i < n; i++ {
				if free[i] && z.AtVec(i) <= 0 {
					allPositive = false
					step := 0.0
					if xi := x.AtVec(i); xi > 0 {
						step = xi / (xi - z.AtVec(i))
					}
					alpha = min(alpha, step)
				}
			}
			if allPositive {
				x.CopyVec(z)
				clear(tried)
				break
			}
			// Move toward z until the first free variable reaches zero,
			// and hold every variable that did at zero.
			for i := 0; i < n; i++ {
				if !free[i] {
					continue
				}
				xi := x.AtVec(i) + alpha*(z.AtVec(i)-x.AtVec(i))
				if xi <= tol {
					xi, free[i] = 0, false
				}
				x.SetVec(i, xi)
			}
			if stepBack != nil {
				stepBack(alpha, x)
			}
			clear(tried)
		}
		gradient()
	}
}

// solveFree returns the unconstrained least-squares solution over the
// free variables of a x = b, the others at zero.
func solveFree(a *mat.Dense, b *mat.VecDense, free []bool) (*mat.VecDense, error) {
	m, n := a.Dims()
	var cols []int
	for i := 0; i < n; i++ {
		if free[i] {
			cols = append(cols, i)
		}
	}
	sub := mat.NewDense(m, len(cols), nil)
	for k, c := range cols {
		sub.SetCol(k, mat.Col(nil, c, a))
	}
	var s mat.VecDense
	if err := s.SolveVec(sub, b); err != nil {
		return nil, err
	}
	z := mat.NewVecDense(n, nil)
	for k, c := range cols {
		v := s.AtVec(k)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("least squares gave no finite solution")
		}
		z.SetVec(c, v)
	}
	return z, nil
}
