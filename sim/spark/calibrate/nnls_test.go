package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestNNLSSmall(t *testing.T) {
	// The unconstrained solution (1, -2) is infeasible: hold the second
	// at zero.
	x, free, err := nnls(mat.NewDense(2, 2, []float64{1, 0, 0, 1}), mat.NewVecDense(2, []float64{1, -2}))
	if err != nil || x.AtVec(0) != 1 || x.AtVec(1) != 0 || !free[0] || free[1] {
		t.Errorf("x = %v, free %v, %v; want (1, 0)", mat.Formatted(x.T()), free, err)
	}
	// A feasible unconstrained solution is the answer.
	a := mat.NewDense(3, 2, []float64{1, 1, 1, 2, 1, 3})
	b := mat.NewVecDense(3, []float64{3, 5, 7.5})
	x, _, err = nnls(a, b)
	var ols mat.VecDense
	if err2 := ols.SolveVec(a, b); err != nil || err2 != nil || !mat.EqualApprox(x, &ols, 1e-12) {
		t.Errorf("x = %v, least squares %v (%v, %v)", mat.Formatted(x.T()), mat.Formatted(ols.T()), err, err2)
	}
}

// bestBySubsets solves the same problem by brute force: the least squares
// over every subset of the columns, the best one that is non-negative.
func bestBySubsets(a *mat.Dense, b *mat.VecDense) float64 {
	m, n := a.Dims()
	best := mat.Norm(b, 2) // x = 0
	for mask := 1; mask < 1<<n; mask++ {
		free := make([]bool, n)
		for j := 0; j < n; j++ {
			free[j] = mask&(1<<j) != 0
		}
		z, err := solveFree(a, b, free)
		if err != nil {
			continue
		}
		ok := true
		for j := 0; j < n; j++ {
			ok = ok && z.AtVec(j) >= 0
		}
		if !ok {
			continue
		}
		r := mat.NewVecDense(m, nil)
		r.MulVec(a, z)
		r.SubVec(b, r)
		best = min(best, mat.Norm(r, 2))
	}
	return best
}

// On random problems the solution is non-negative, satisfies the
// optimality conditions, and is as good as the best of every subset.
func TestNNLSAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 500; trial++ {
		m, n := 3+rng.IntN(20), 1+rng.IntN(5)
		a := mat.NewDense(m, n, nil)
		b := mat.NewVecDense(m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				a.Set(i, j, rng.NormFloat64())
			}
			b.SetVec(i, rng.NormFloat64()*3)
		}
		x, free, err := nnls(a, b)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		r := mat.NewVecDense(m, nil)
		r.MulVec(a, x)
		r.SubVec(b, r)
		var w mat.VecDense
		w.MulVec(a.T(), r)
		for j := 0; j < n; j++ {
			if x.AtVec(j) < 0 || free[j] != (x.AtVec(j) > 0) {
				t.Fatalf("trial %d: x[%d] = %v, free %v", trial, j, x.AtVec(j), free[j])
			}
			// The gradient is zero on the free variables and does not
			// want a held one to grow.
			if free[j] && math.Abs(w.AtVec(j)) > 1e-9 || !free[j] && w.AtVec(j) > 1e-9 {
				t.Fatalf("trial %d: gradient %v at x[%d] = %v", trial, w.AtVec(j), j, x.AtVec(j))
			}
		}
		if got, best := mat.Norm(r, 2), bestBySubsets(a, b); got > best+1e-9 {
			t.Fatalf("trial %d: residual %v, best subset %v", trial, got, best)
		}
	}
}

// TestNNLSStepBack follows Lawson-Hanson's path on a problem worked by
// hand, where freeing a second variable makes the first one freed
// negative. Columns c1 = (1, 1, 0), c2 = (2, 1, 0), c3 = 0; b = (2, 3, 1).
//
//	x = 0: gradient Aᵀb = (5, 7, 0): free x2; over {x2}: 7/5 = 1.4.
//	x = (0, 1.4, 0): r = (-0.8, 1.6, 1), gradient (0.8, 0, 0): free x1;
//	  over {x1, x2}: x1 + 2 x2 = 2, x1 + x2 = 3: z = (4, -1, 0).
//	z2 < 0: step back from x toward z by alpha = 1.4 / (1.4 + 1) = 7/12,
//	  the step at which x2 reaches 0: x = (7/12 × 4, 0, 0) = (7/3, 0, 0),
//	  x2 held at 0.
//	over {x1}: 5/2 = 2.5: x = (2.5, 0, 0); gradient (0, -0.5, 0): done.
//
// The step back is the shortest step that makes a free variable 0 (the
// minimum over the negative ones); taking the whole step to z would
// give (4, 0, 0) there, and the same answer in the end.
func TestNNLSStepBack(t *testing.T) {
	a := mat.NewDense(3, 3, []float64{1, 2, 0, 1, 1, 0, 0, 0, 0})
	b := mat.NewVecDense(3, []float64{2, 3, 1})
	var alphas []float64
	var xs []*mat.VecDense
	x, free, err := nnlsSteps(a, b, func(alpha float64, x *mat.VecDense) {
		alphas = append(alphas, alpha)
		xs = append(xs, mat.VecDenseCopyOf(x))
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(alphas) != 1 || math.Abs(alphas[0]-7.0/12) > 1e-12 || !mat.EqualApprox(xs[0], mat.NewVecDense(3, []float64{7.0 / 3, 0, 0}), 1e-12) {
		t.Errorf("step backs: alpha %v, x %v; want one, alpha 7/12, x (7/3, 0, 0)", alphas, xs)
	}
	if !mat.EqualApprox(x, mat.NewVecDense(3, []float64{2.5, 0, 0}), 1e-12) || !free[0] || free[1] || free[2] {
		t.Errorf("x = %v, free %v; want (2.5, 0, 0)", mat.Formatted(x.T()), free)
	}
}
