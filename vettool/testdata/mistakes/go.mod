module example.com/mistakes

go 1.25
