set terminal pngcairo size 900,600 font 'sans,11'
set output 'docs/img/landlock-instructions.png'
set title 'Landlock worst case: instructions per check (callgrind)'
set xlabel 'depth D (directories)'
set ylabel 'instructions per check'
set logscale xy
set grid
set key top left
set format y '10^{%L}'
plot 'docs/img/landlock-instructions.dat' index 0 using 1:2 with linespoints lw 2 title 'by-access', 'docs/img/landlock-instructions.dat' index 1 using 1:2 with linespoints lw 2 title 'by-layer', 'docs/img/landlock-instructions.dat' index 2 using 1:2 with linespoints lw 2 title 'memoized'
