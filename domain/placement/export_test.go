package placement

// StateOf compiles in as Place does and returns the round's state, for
// the benchmark's memory figures.
func StateOf(in Input) (any, error) { return compile(&in) }

// PlaceExhaustively is Place with selectors that compare every agent
// that fits instead of reading the rankings.
func PlaceExhaustively(in Input) (Result, error) {
	st, err := compile(&in)
	if err != nil {
		return Result{}, err
	}
	st.exhaustive = true
	st.run()
	return st.out, nil
}
