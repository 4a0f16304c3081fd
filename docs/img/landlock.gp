set terminal pngcairo size 900,600 font 'sans,11'
set output 'docs/img/landlock.png'
set title 'Landlock worst case: open denied after walking D directories with one rule each'
set xlabel 'depth D (directories)'
set ylabel 'time per check (ns)'
set logscale xy
set grid
set key top left
set format y '10^{%L}'
plot 'docs/img/landlock.dat' index 0 using 1:2 with linespoints lw 2 title 'by-access', 'docs/img/landlock.dat' index 1 using 1:2 with linespoints lw 2 title 'by-layer', 'docs/img/landlock.dat' index 2 using 1:2 with linespoints lw 2 title 'kernel', 'docs/img/landlock.dat' index 3 using 1:2 with linespoints lw 2 title 'memoized'
