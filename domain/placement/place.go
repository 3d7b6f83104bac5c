package placement

// Place decides one round: which pending sessions go where, and why the
// others wait. It is a pure function of its input (see the package
// documentation for the rules). It returns a KindInvalid error only for a
// malformed input — two agents, devices, sessions or kernels with one id,
// an unknown order or selector; whatever is wrong with one session is
// reported as that session's failure and never stops the round.
func Place(in Input) (Result, error) {
	st, err := compile(&in)
	if err != nil {
		return Result{}, err
	}
	st.run()
	return st.out, nil
}
