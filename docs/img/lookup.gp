set terminal pngcairo size 900,600 font 'sans,11'
set output 'docs/img/lookup.png'
set title 'stat() of /usr/include/linux/fs.h: millions per second (log)'
set style fill solid 0.7
set boxwidth 0.6
set logscale y
set grid y
set yrange [0.1:*]
unset key
plot 'docs/img/lookup.dat' using 1:3:xtic(2) with boxes, '' using 1:3:(sprintf('%.2f', $3)) with labels offset 0,1
