package main
import (
 _ "github.com/cockroachdb/pebble"
 _ "gonum.org/v1/gonum/stat/distuv"
 _ "gonum.org/v1/plot"
 _ "github.com/olekukonko/tablewriter"
 _ "go.yaml.in/yaml/v3"
 _ "github.com/spf13/cobra"
 _ "github.com/schollz/progressbar/v3"
 _ "pgregory.net/rapid"
 _ "golang.org/x/term"
)
func main(){}
