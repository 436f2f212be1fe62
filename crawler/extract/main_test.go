package extract

import (
	"testing"

	"github.com/linkpatrol/linkpatrol/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Exit(m.Run()) }
