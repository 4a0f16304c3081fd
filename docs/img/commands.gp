set terminal pngcairo size 900,600 font 'sans,11'
set output 'docs/img/commands.png'
set title 'Issue 11: the commands against what they compete with (ratios)'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.7
set boxwidth 0.9
set grid y
set logscale y
set yrange [0.5:40]
set key top left
plot 'docs/img/commands.dat' using 2:xtic(1) title 'measured', '' using 3 title 'target', '' using ($0-0.15):2:(sprintf('%.2f', $2)) with labels offset 0,1 notitle
